# analysis/lib/tidy.R -- readers for the tidy-data contract (docs/tidy-data.md).
#
# What:    read_run(dir)   one run directory -> list(meta, dir, key, goodput, tcp, queue)
#          read_runs(root, experiments = NULL) every run below root that has a run.json
#                          (with experiments, only theirs) -> list(index, runs,
#                          goodput, tcp, queue), tables row-bound over runs
#          point_label(meta) the sweep point's human label ("BBQ, 20 vs 50 ms")
# Inputs:  <run>/run.json and <run>/tidy/{goodput,tcp,queue,flow_queue}.csv only (never raw/).
# Outputs: tibbles; every table row carries experiment, point, repetition, valid.
#
# A directory without run.json is incomplete and ignored. Runs with status != "ok"
# ("failed") or fidelity.valid == false ("invalid") are kept, with valid = FALSE, so
# callers can list them and must exclude them from means (see aggregate_valid()).

suppressPackageStartupMessages({
  library(dplyr)
  library(readr)
  library(jsonlite)
})

# Column types of the tidy CSVs. Byte and packet counters are doubles: cumulative
# byte counts overflow R's 32-bit integers. Unknown extra columns are guessed.
TIDY_COLS <- list(
  goodput = cols(flow = col_integer(), t_s = col_double(), interval_s = col_double(),
                 bytes = col_double(), goodput_mbps = col_double(), .default = col_guess()),
  tcp = cols(flow = col_integer(), t_s = col_double(), cc = col_character(),
             state = col_character(), .default = col_double()),
  queue = cols(.default = col_double()),
  flow_queue = cols(flow = col_integer(), .default = col_double())   # only with capture: bottleneck
)

`%||%` <- function(a, b) if (is.null(a)) b else a
`%|NA|%` <- function(a, b) ifelse(is.na(a), b, a)

# "valid" | "invalid" (fidelity check failed) | "failed" (status != "ok").
run_verdict <- function(meta) {
  if (!identical(meta$status, "ok")) return("failed")
  if (!isTRUE(meta$fidelity$valid)) return("invalid")
  "valid"
}

# Number of runs per verdict, named c(valid, invalid, failed), from read_runs()$index.
verdict_counts <- function(index) {
  c(table(factor(index$verdict, levels = c("valid", "invalid", "failed"))))
}

# The human label of a run's sweep point (run.json point_label, written since the
# labels of mininet/bbrlab/experiment/labels.py); runs written before it fall back to the
# point's name.
point_label <- function(meta) {
  label <- meta$point_label %||% meta$point %||% "base"
  if (length(label) == 0 || is.na(label[1]) || label[1] == "") "base" else as.character(label[1])
}

# One-row key identifying a run; joined onto every table of that run.
run_key <- function(meta) {
  tibble(experiment = as.character(meta$experiment),
         point = as.character(meta$point %||% "base"),
         repetition = as.integer(meta$repetition),
         valid = run_verdict(meta) == "valid")
}

# Per-flow table from run.json "flows"; label falls back to "<rtt> ms RTT".
# stop_s is NA when the flow runs to the end of the experiment.
flows_table <- function(meta) {
  num <- function(f, name) as.numeric(f[[name]] %||% NA)
  bind_rows(lapply(meta$flows, function(f) tibble(
    flow = as.integer(f$flow), cc = as.character(f$cc %||% NA),
    rtt_ms = num(f, "rtt_ms"), start_s = num(f, "start_s") %|NA|% 0,
    stop_s = num(f, "stop_s"),
    label = as.character(f$label %||% sprintf("%s ms RTT", format(num(f, "rtt_ms")))))))
}

# One tidy table of a run with the run key prepended; an empty tibble when the
# file is missing (failed runs may have no tidy data).
read_tidy <- function(dir, name, key) {
  path <- file.path(dir, "tidy", paste0(name, ".csv"))
  if (!file.exists(path)) return(tibble())
  tab <- read_csv(path, col_types = TIDY_COLS[[name]], progress = FALSE)
  bind_cols(key[rep(1, nrow(tab)), ], tab)
}

read_run <- function(dir) {
  meta <- read_json(file.path(dir, "run.json"), simplifyVector = FALSE)
  key <- run_key(meta)
  tables <- lapply(names(TIDY_COLS), function(n) read_tidy(dir, n, key))
  c(list(meta = meta, dir = dir, key = key), setNames(tables, names(TIDY_COLS)))
}

# All complete runs below root (root itself may be a run directory); with `experiments`, only the
# runs of those experiments (run.json "experiment"): the others' tables are never read.
read_runs <- function(root, experiments = NULL) {
  jsons <- list.files(root, pattern = "^run\\.json$", recursive = TRUE, full.names = TRUE)
  if (!is.null(experiments) && length(jsons) > 0) {
    of <- vapply(jsons, function(j) as.character(read_json(j)$experiment %||% NA), "", USE.NAMES = FALSE)
    jsons <- jsons[of %in% experiments]
  }
  runs <- lapply(dirname(jsons), read_run)
  empty <- tibble(experiment = character(), point = character(), repetition = integer(),
                  valid = logical(), verdict = character(), profile = character(),
                  dir = character(), point_label = character())
  index <- bind_rows(empty, lapply(runs, function(r) mutate(
    r$key, verdict = run_verdict(r$meta), profile = as.character(r$meta$profile %||% NA),
    dir = r$dir, point_label = point_label(r$meta))))
  if (length(runs) > 0) {
    ord <- order(index$experiment, index$point, index$repetition)
    runs <- runs[ord]
    index <- index[ord, ]
  }
  bind <- function(name) bind_rows(lapply(runs, `[[`, name))
  list(index = index, runs = runs,
       goodput = bind("goodput"), tcp = bind("tcp"), queue = bind("queue"),
       flow_queue = bind("flow_queue"))
}

# Runs of one experiment (and optionally one point), as a list of run objects.
select_runs <- function(runs, experiment, point = NULL) {
  keep <- runs$index$experiment == experiment
  if (!is.null(point)) keep <- keep & runs$index$point %in% point
  runs$runs[keep]
}

# Directories that look like run directories (rep<k>) but have no run.json.
incomplete_run_dirs <- function(root) {
  dirs <- list.dirs(root, recursive = TRUE)
  dirs[grepl("^rep[0-9]+$", basename(dirs)) & !file.exists(file.path(dirs, "run.json"))]
}
