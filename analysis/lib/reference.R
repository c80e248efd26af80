# analysis/lib/reference.R -- another profile's claims table beside the paper profile's verdicts.
#
#   read_reference(path, ids)             the paper profile's claims CSV (as analysis/claims.R
#                                         writes it) for the claims `ids`; stops naming the file
#                                         when a column is missing
#   reference_cell(ref, id, verdict)      the text a verdict cell appends: the paper profile's
#                                         verdict (and strength), bold where it differs
#   disagreement_lines(ref, res, profile) a paragraph for after the table: the claims on which
#                                         this profile and the paper profile disagree, and those
#                                         the paper profile did not run

REFERENCE_COLUMNS <- c("id", "verdict", "strength", "profile", "reps")

read_reference <- function(path, ids) {
  ref <- read_csv(path, col_types = cols(.default = col_character()), na = character(),
                  progress = FALSE, show_col_types = FALSE)
  absent <- setdiff(REFERENCE_COLUMNS, names(ref))
  if (length(absent)) stop(path, ": not a claims CSV of analysis/claims.R (no column ", paste(absent, collapse = ", "), ")")
  ref[ref$id %in% ids, REFERENCE_COLUMNS]
}

# The paper profile's verdict of one claim: "" when it has none.
reference_verdict <- function(ref, id) {
  r <- ref[ref$id == id, ]
  if (nrow(r) == 0) return(list(verdict = "not run", strength = ""))
  list(verdict = r$verdict[1], strength = r$strength[1])
}

disagrees <- function(own, paper) own != "not run" & paper != "not run" & own != paper

reference_cell <- function(ref, id, verdict) {
  r <- reference_verdict(ref, id)
  v <- tex_escape(r$verdict)
  if (disagrees(verdict, r$verdict)) v <- sprintf("\\textbf{%s}", v)
  sprintf("\\newline {\\scriptsize paper profile: %s%s}", v, if (r$strength == "") "" else sprintf(" (%s)", r$strength))
}

disagreement_lines <- function(ref, res, profile) {
  paper <- vapply(res$id, function(id) reference_verdict(ref, id)$verdict, "")
  both <- res$verdict != "not run" & paper != "not run"
  differ <- disagrees(res$verdict, paper)
  reps <- suppressWarnings(as.integer(ref$reps[ref$reps != ""]))
  reps <- if (length(reps) && !anyNA(reps) && min(reps) != max(reps)) sprintf("%d--%d", min(reps), max(reps)) else
    unique(as.character(reps))
  own <- tex_escape(if (profile == "") "this" else profile)
  listed <- if (any(differ))
    paste0(": ", paste(sprintf("\\texttt{%s} (%s: %s; paper: %s)", tex_escape(res$id[differ]), own,
                               tex_escape(res$verdict[differ]), tex_escape(paper[differ])), collapse = "; "))
  else ""
  unran <- sum(paper == "not run" & res$verdict != "not run")
  c("", "\\par\\smallskip",
    sprintf(paste0("{\\footnotesize\\raggedright\\textbf{Profile %s against the paper profile} (%s repetition(s) ",
                   "per point, runs of the archive): the verdicts differ on %d of the %d claims both evaluated%s.%s\\par}"),
            own, if (length(reps)) paste(reps, collapse = "+") else "--", sum(differ), sum(both), listed,
            if (unran > 0) sprintf(" The paper profile has no verdict on %d claim(s) evaluated here (their experiments are not in its archive).", unran)
            else ""))
}
