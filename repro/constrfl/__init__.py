"""Paper 003 (He, Peng, Sun, TMLR 2024): federated learning with convex global and local
constraints. Algorithm 1 (proximal augmented Lagrangian, `proxal`), Algorithm 2 (inexact ADMM,
`admm`), Algorithm 3 (centralised cProx-AL, `cproxal`), the problems of Sections 5 and E.2
(`problems`) and the experiments of Tables 1-4 and Figures 1-2 (`experiments`)."""
