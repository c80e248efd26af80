# analysis/lib/output.R -- atomic file output and small LaTeX helpers.
#
# What:    write_atomic(), write_csv_atomic(), save_plot_atomic(): write to a temporary file in the
#          target's directory, then file.rename() it into place, so a reader (or
#          Snakemake) never sees a half-written file.
#          tex_escape(), fmt_num(), tabular_lines(): LaTeX table fragments.
# Inputs:  character vectors, ggplot objects, data frames.
# Outputs: files.

# Command-line arguments, with a usage message when too few are given.
script_args <- function(usage, n_required) {
  args <- commandArgs(trailingOnly = TRUE)
  if (length(args) < n_required) {
    message("usage: ", usage)
    quit(status = 2)
  }
  args
}

# Runs write(tmp) on a temporary file beside `path`, then renames it to `path`.
atomic <- function(path, write) {
  dir.create(dirname(path), showWarnings = FALSE, recursive = TRUE)
  tmp <- tempfile(".tmp-", tmpdir = dirname(path), fileext = paste0(".", tools::file_ext(path)))
  on.exit(if (file.exists(tmp)) unlink(tmp))
  write(tmp)
  if (!file.rename(tmp, path)) stop("cannot rename ", tmp, " to ", path)
  invisible(path)
}

write_atomic <- function(lines, path) {
  atomic(path, function(tmp) writeLines(lines, tmp, useBytes = TRUE))
}

write_csv_atomic <- function(df, path) {
  atomic(path, function(tmp) readr::write_csv(df, tmp, na = ""))
}

save_plot_atomic <- function(plot, path, width, height, ...) {
  atomic(path, function(tmp) ggplot2::ggsave(tmp, plot, width = width, height = height,
                                             units = "in", ...))
}

tex_escape <- function(x) {
  x <- as.character(x)
  x <- gsub("\\", "\001", x, fixed = TRUE)
  x <- gsub("([&%$#_{}])", "\\\\\\1", x)
  x <- gsub("~", "\\textasciitilde{}", x, fixed = TRUE)
  x <- gsub("^", "\\textasciicircum{}", x, fixed = TRUE)
  x <- gsub("<", "\\textless{}", x, fixed = TRUE)
  x <- gsub(">", "\\textgreater{}", x, fixed = TRUE)
  x <- gsub("\001", "\\textbackslash{}", x, fixed = TRUE)
  x[is.na(x)] <- ""
  x
}

# Numbers for tables: `digits` decimals, "--" for NA.
fmt_num <- function(x, digits = 1) {
  ifelse(is.na(x), "--", formatC(x, format = "f", digits = digits))
}

# Rows of a booktabs table body (cells are inserted verbatim: escape them first).
tabular_rows <- function(df) {
  if (nrow(df) == 0) return(character())
  paste0(do.call(paste, c(unname(as.list(df)), sep = " & ")), " \\\\")
}

# A complete booktabs table: `begin` opens it (e.g. "\\begin{tabularx}{\\linewidth}{lX}").
# A longtable gets `caption` (with \\label) on top and its header repeated on every
# page; `note` (LaTeX) becomes a footnote-size paragraph below the table.
# The caption (with its \\label) goes into the first head only, so that a table
# spanning pages defines its label once; later pages repeat the column header.
tabular_lines <- function(df, begin, header, note = NULL, caption = NULL) {
  env <- sub("^\\\\begin\\{([a-z*]+)\\}.*$", "\\1", begin)
  long <- env == "longtable"
  head <- c("\\toprule", paste0(paste(header, collapse = " & "), " \\\\"), "\\midrule")
  c(begin, if (long && !is.null(caption)) paste0(caption, " \\\\"), head,
    if (long && !is.null(caption)) c("\\endfirsthead", head),
    if (long) "\\endhead", tabular_rows(df), "\\bottomrule", sprintf("\\end{%s}", env),
    if (!is.null(note)) c("", "\\par\\smallskip", sprintf("{\\footnotesize\\raggedright %s\\par}", note)))
}
