# analysis/lib/figure.R -- what a figure script (analysis/figures/<paper>/*.R) sources:
# every analysis library (load.R) and the plotting helpers (plot.R).
#   source(file.path(<analysis dir>, "lib", "figure.R"), chdir = TRUE)
source("load.R")
source("plot.R")
