
BprobsJ
󴬔�0 1�