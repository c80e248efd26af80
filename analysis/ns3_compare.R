#!/usr/bin/env Rscript
# analysis/ns3_compare.R -- one paper's claims on two or three substrates: published value, the
# ns-3 simulation's value and verdict, optionally ns-3 under Linux's rules, the kernel testbed's
# value and verdict, and a mark where the ns-3 and kernel verdicts differ.
#
# Usage:   Rscript analysis/ns3_compare.R <kernel claims.csv> <ns3 claims.csv> <out.tex>
#                  [<ns3-linux claims.csv>]
# Inputs:  claims CSVs written by analysis/claims.R for the same claims file: one on the kernel
#          tree (results/<profile>/), one on the ns-3 tree (results/<profile>-ns3/) and, when
#          given, one on the tree of ns-3 under Linux's rules (results/<profile>-ns3-linux/:
#          `cc: bbr` is the project's port of Linux's BBR and every BBR takes its rate samples
#          as Linux does), shown between ns-3 and the kernel.
#          Columns used: id, source, text, published, unit, kind, op, aggregate, mean, n,
#          verdict, strength, profile, reps. A claim missing from one file (or one of the
#          files missing altogether: pass a path that does not exist) is "not run" there.
# Outputs: <out.tex>  longtable fragment: one row per claim (the kernel file's order, then
#                     claims only the ns-3 files have); the last column marks a verdict that
#                     differs between ns-3 and the kernel when both ran the claim; a note with
#                     each side's profile, repetitions and verdict counts and, with the third
#                     input, how many of the differing claims ns-3 under Linux's rules settles
#                     as the kernel does.
#          <out>.csv  the same per claim for machines: id, source, published, unit,
#                     ns3_mean, ns3_verdict, ns3_strength, kernel_mean, kernel_verdict,
#                     kernel_strength, differ (TRUE/FALSE); with the third input also
#                     linux_mean, linux_verdict, linux_strength and linux_as_kernel (TRUE: ns-3
#                     and the kernel differ, and ns-3 under Linux's rules gives the kernel's
#                     verdict).
#          Both written atomically.

script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)

args <- script_args("ns3_compare.R <kernel claims.csv> <ns3 claims.csv> <out.tex> [<ns3-linux claims.csv>]", 3)
COLS <- c("id", "source", "text", "published", "unit", "kind", "op", "aggregate", "mean", "n",
          "verdict", "strength", "profile", "reps")

read_side <- function(path) {
  if (!file.exists(path)) return(tibble::as_tibble(setNames(rep(list(character()), length(COLS)), COLS)))
  t <- read_csv(path, col_types = cols(.default = col_character()), na = character(), progress = FALSE)
  for (c in setdiff(COLS, names(t))) t[[c]] <- rep("", nrow(t))
  t
}
kernel <- read_side(args[1])
ns3 <- read_side(args[2])
with_linux <- length(args) >= 4
linux <- read_side(if (with_linux) args[4] else "")
ids <- unique(c(kernel$id, ns3$id, linux$id))

row_of <- function(t, id) if (id %in% t$id) as.list(t[t$id == id, ][1, ]) else NULL
verdict_of <- function(r) if (is.null(r) || r$verdict == "") "not run" else r$verdict

# Decimals shown: those of the published value, at least one (trends: tau, two), as claims.R.
decimals <- function(r) if (r$kind == "trend") 2 else max(1, nchar(sub("^[^.]*\\.?", "", r$published)))
value_text <- function(r, d) {
  if (is.null(r) || verdict_of(r) == "not run" || r$mean == "") return("--")
  v <- formatC(as.numeric(r$mean), format = "f", digits = d)
  if (r$kind == "trend") sprintf("$\\tau = %s$", v) else v
}
side_cell <- function(r, d) {
  v <- verdict_of(r)
  s <- if (!is.null(r) && r$strength != "") sprintf(" {\\scriptsize(%s)}", r$strength) else ""
  sprintf("%s\\newline %s%s", value_text(r, d), tex_escape(v), s)
}
op_tex <- c("<" = "$<$", "<=" = "$\\le$", ">" = "$>$", ">=" = "$\\ge$")
published_cell <- function(r) {
  if (r$kind == "trend") return(if (r$op %in% c("<", "<=")) "falls" else "grows")
  v <- sprintf("%s~%s", tex_escape(r$published), tex_escape(r$unit))
  if (r$kind == "bound" && r$op %in% names(op_tex)) v <- paste(op_tex[[r$op]], v)
  if (r$aggregate %in% c("all", "min", "max")) v <- paste0(c(all = "every point: ", min = "min.\\ ",
                                                                  max = "max.\\ ")[[r$aggregate]], v)
  v
}

per_claim <- lapply(ids, function(id) {
  k <- row_of(kernel, id)
  s <- row_of(ns3, id)
  l <- row_of(linux, id)
  any_row <- if (!is.null(k)) k else if (!is.null(s)) s else l
  d <- decimals(any_row)
  kv <- verdict_of(k)
  sv <- verdict_of(s)
  lv <- verdict_of(l)
  differ <- kv != "not run" && sv != "not run" && kv != sv
  tex <- tibble(claim = sprintf("\\textbf{%s} {\\scriptsize ``%s''}", tex_escape(any_row$source),
                                tex_escape(any_row$text)),
                published = published_cell(any_row), ns3 = side_cell(s, d))
  if (with_linux) tex$linux <- side_cell(l, d)
  tex$kernel <- side_cell(k, d)
  tex$mark <- if (differ) "$\\neq$" else ""
  csv <- tibble(id = id, source = any_row$source, published = any_row$published, unit = any_row$unit,
                ns3_mean = if (is.null(s)) "" else s$mean, ns3_verdict = sv,
                ns3_strength = if (is.null(s)) "" else s$strength,
                kernel_mean = if (is.null(k)) "" else k$mean, kernel_verdict = kv,
                kernel_strength = if (is.null(k)) "" else k$strength, differ = differ)
  if (with_linux) {
    csv$linux_mean <- if (is.null(l)) "" else l$mean
    csv$linux_verdict <- lv
    csv$linux_strength <- if (is.null(l)) "" else l$strength
    csv$linux_as_kernel <- differ && lv == kv
  }
  list(tex = tex, csv = csv)
})
rows <- dplyr::bind_rows(lapply(per_claim, `[[`, "tex"))
csv <- dplyr::bind_rows(lapply(per_claim, `[[`, "csv"))
if (!nrow(csv)) csv <- tibble(id = character(), differ = logical(), linux_as_kernel = logical())

both_ran <- function(a, b) a != "not run" & b != "not run"
VERDICTS <- c("reproduced", "qualitatively reproduced", "not reproduced", "not run")
counts <- function(v) paste(sprintf("%d %s", as.integer(table(factor(v, levels = VERDICTS))), VERDICTS), collapse = ", ")
side_note <- function(t, label, verdicts) {
  prof <- paste(sort(unique(setdiff(t$profile, ""))), collapse = "+")
  reps <- suppressWarnings(max(as.integer(t$reps), na.rm = TRUE))
  sprintf("%s: profile \\texttt{%s}, up to %s repetition(s) per point; %s.", label,
          tex_escape(if (prof == "") "none" else prof), if (is.finite(reps)) reps else "--", counts(verdicts))
}
note <- paste(
  "Published: the paper's value or bound; ns-3: Debian's ns-3 (\\texttt{TcpBbr}, \\texttt{TcpCubic})",
  "running the same specs (\\texttt{-{}-config backend=ns3});",
  if (with_linux) paste("ns-3, Linux rules: the same with \\texttt{cc: bbr} as the project's port of",
                        "Linux's BBR and Linux's rate-sample rules for every BBR (\\texttt{ns3\\_rules=linux});"),
  "kernel: Linux~6.1 in the emulated testbed.",
  "Each cell: the measured value in the claim's terms (as in the claims table), then the verdict by the",
  "same rule. $\\neq$: the ns-3 and kernel verdicts differ, both sides having run the claim;",
  "not run: no valid run there (e.g. a run ns-3 refuses).",
  side_note(ns3, "ns-3", csv$ns3_verdict),
  if (with_linux) side_note(linux, "ns-3, Linux rules", csv$linux_verdict),
  side_note(kernel, "Kernel", csv$kernel_verdict),
  sprintf("Verdicts differ on %d of %d claims.", sum(csv$differ), nrow(csv)),
  if (with_linux) sprintf(paste("Of those %d, ns-3 under Linux's rules gives the kernel's verdict on %d;",
                                "ns-3 under Linux's rules and the kernel differ on %d of the %d claims both ran."),
                          sum(csv$differ), sum(csv$linux_as_kernel),
                          sum(both_ran(csv$linux_verdict, csv$kernel_verdict) & csv$linux_verdict != csv$kernel_verdict),
                          sum(both_ran(csv$linux_verdict, csv$kernel_verdict))))

cell <- function(w) sprintf(">{\\raggedright\\arraybackslash}p{%.2f\\linewidth}", w)
widths <- if (with_linux) c(0.30, 0.13, 0.14, 0.14, 0.14) else c(0.38, 0.14, 0.17, 0.17)
header <- c("Claim", "Published", "ns-3", if (with_linux) "ns-3, Linux rules", "Kernel", "")
out_tex <- args[3]
write_atomic(tabular_lines(rows, paste0("\\begin{longtable}{@{}", paste(cell(widths), collapse = ""),
                                        ">{\\centering\\arraybackslash}p{0.03\\linewidth}@{}}"),
                           header, note = note), out_tex)
write_csv_atomic(csv, sub("(\\.tex)?$", ".csv", out_tex))
