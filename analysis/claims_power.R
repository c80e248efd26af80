#!/usr/bin/env Rscript
# analysis/claims_power.R -- can every claim pass, and can it fail? (analysis/lib/power.R)
#
# Usage:   Rscript analysis/claims_power.R <out.csv> <band> <claims.csv>...
# Inputs:  claims CSVs (format: claims/README.md); band: rule (the verdict rule's
#          match_band), flat15 or flat50 (flat bands of 15 % and 50 % of the measured
#          quantity, to show that the check catches a band without power).
# Outputs: <out.csv>, one row per claim (analysis/lib/power.R, claim_power()),
#          written atomically. One R process for every claim: no runs are read.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)
source(file.path(script_dir, "lib", "power.R"), chdir = TRUE)

args <- script_args("claims_power.R <out.csv> <band> <claims.csv>...", 3)
specs <- file.path(dirname(script_dir), "mininet", "specs")
res <- bind_rows(lapply(args[-(1:2)], function(p) claims_power(read_claims(p), args[2], specs)))
tmp <- paste0(args[1], ".tmp")
write_csv(res, tmp)
file.rename(tmp, args[1])
