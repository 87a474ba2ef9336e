"""The pipeline demo: logistic regression on a8a with L-BFGS, run through the engine end to end
(experiment ``core.demo``; its seeds derive from that name).
"""
