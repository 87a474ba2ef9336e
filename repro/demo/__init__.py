"""The pipeline demo: logistic regression on a8a with L-BFGS, run through the engine end to end
(experiment ``core.demo``, its name kept from before issue 13 so that its seeds are unchanged).
"""
