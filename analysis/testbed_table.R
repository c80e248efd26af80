#!/usr/bin/env Rscript
# analysis/testbed_table.R -- "how it was run": the testbed of all runs as a table.
#
# Usage:   Rscript analysis/testbed_table.R <runs_root> <out.tex>
# Inputs:  run.json of every run below <runs_root> (profile, testbed: its kernel and
#          module builds' digests too, git_revision, timings, status, fidelity).
# Outputs: <out.tex>, a two-column booktabs tabular (item, value) as wide as the
#          text: values wrap. A field that differs between runs lists each value
#          with its number of runs; git revisions are shortened to 12 digits.
#          Written atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)

args <- script_args("testbed_table.R <runs_root> <out.tex>", 2)

# One value, or "a (3 runs), b (1 run)" when runs differ.
distinct_text <- function(values) {
  values[is.na(values) | values == ""] <- "(not recorded)"
  counts <- sort(table(values), decreasing = TRUE)
  if (length(counts) == 1) return(tex_escape(names(counts)))
  paste(sprintf("%s (%d run%s)", tex_escape(names(counts)), counts,
                ifelse(counts == 1, "", "s")), collapse = ", ")
}

field <- function(metas, get) distinct_text(vapply(metas, function(m) {
  v <- get(m)
  if (is.null(v)) NA_character_ else paste(unlist(v), collapse = ", ")
}, ""))

timing <- function(metas, name) {
  v <- unlist(lapply(metas, function(m) m$timings[[name]]))
  if (length(v) == 0) "--" else sprintf("%.1f s median (%.1f--%.1f s)", median(v), min(v), max(v))
}

# "0123456789ab-dirty" of a 40-digit revision (the suffix kept).
short_revision <- function(rev) {
  if (is.null(rev)) return(NULL)
  sub("^([0-9a-f]{12})[0-9a-f]{28}", "\\1", rev)
}

# The hosts the runs ran on (run.json testbed.host; a cluster spreads runs over many):
# each with its number of runs, or only their number beyond six hosts.
hosts_text <- function(metas) {
  hosts <- vapply(metas, function(m) as.character(m$testbed$host %||% NA_character_), "")
  n <- length(unique(hosts[!is.na(hosts)]))
  if (n > 6) sprintf("%d hosts", n) else distinct_text(hosts)
}

# The backend; for ns-3 also its version and how it runs BBR (ns3 or linux rules; older runs: ns3).
backend_text <- function(m) {
  b <- m$testbed$backend
  if (is.null(b) || b != "ns3") return(b)
  sprintf("ns3 (ns-3 %s, %s rules)", m$testbed$ns3_version %||% "?", m$testbed$ns3_rules %||% "ns3")
}

# The kernel build a run booted, by the first 12 digits of its sha256 (run.json
# testbed.kernel_sha256; runs from before it was recorded: "(not recorded)").
kernel_build_text <- function(m) {
  d <- m$testbed$kernel_sha256
  if (is.null(d)) NULL else substr(d, 1, 12)
}

# The variant modules a run loaded, "name sha256[1:12]" each ("none" without one).
module_builds_text <- function(m) {
  mods <- m$testbed$modules
  if (length(mods) == 0) return("none")
  paste(vapply(mods, function(x) sprintf("%s %s", x$name, substr(x$sha256 %||% "?", 1, 12)), ""),
        collapse = ", ")
}

runs <- read_runs(args[1])
metas <- lapply(runs$runs, `[[`, "meta")
counts <- verdict_counts(runs$index)
rows <- tibble(
  item = c("Runs", "Profile", "Backend", "Clock", "Guest kernel", "Kernel build (sha256)",
           "Module builds (sha256)", "Congestion controls",
           "Git revision", "Hosts", "Boot time", "Set-up time", "Experiment time", "Wall time per run"),
  value = c(sprintf("%d (%d valid, %d invalid, %d failed)", length(metas), counts[["valid"]],
                    counts[["invalid"]], counts[["failed"]]),
            field(metas, function(m) m$profile),
            field(metas, backend_text),
            field(metas, function(m) m$testbed$clock),
            field(metas, function(m) m$testbed$kernel_release),
            field(metas, kernel_build_text),
            field(metas, module_builds_text),
            field(metas, function(m) m$testbed$congestion_controls),
            field(metas, function(m) short_revision(m$git_revision)),
            hosts_text(metas),
            timing(metas, "boot_s"), timing(metas, "setup_s"),
            timing(metas, "experiment_s"), timing(metas, "wall_s")))

write_atomic(tabular_lines(rows, "\\begin{tabular}{@{}l>{\\raggedright\\arraybackslash}p{0.7\\linewidth}@{}}",
                           c("Item", "Value")), args[2])
