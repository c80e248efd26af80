# analysis/lib/load.R -- loads every analysis library; scripts do
#   source(file.path(<analysis dir>, "lib", "load.R"), chdir = TRUE)
# variants.R first (the labels); metrics.R before the per-paper metric files, which
# extend its METRICS list.
for (f in c("variants.R", "tidy.R", "metrics.R", "metrics_tang.R", "metrics_utsumi2022.R", "backlog_estimate.R",
           "verdict.R", "output.R", "reference.R")) source(f)
