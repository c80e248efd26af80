# analysis/lib/load.R -- loads every analysis library; scripts do
#   source(file.path(<analysis dir>, "lib", "load.R"), chdir = TRUE)
for (f in c("tidy.R", "metrics.R", "verdict.R", "output.R")) source(f)
