# analysis/lib/load.R -- loads every analysis library; scripts do
#   source(file.path(<analysis dir>, "lib", "load.R"), chdir = TRUE)
# metrics.R first: the per-paper metric files extend its METRICS list.
for (f in c("tidy.R", "metrics.R", "metrics_tang.R", "metrics_utsumi2022.R", "backlog_estimate.R",
           "verdict.R", "output.R")) source(f)
