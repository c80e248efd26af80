# analysis/lib/variants.R -- the congestion controls' labels, read from the variant registry
# (mininet/bbrlab/experiment/variants.yaml, the one list of the congestion controls a spec may name).
#
# What:    VARIANTS_YAML          the registry's path (this file's ../../mininet/bbrlab/)
#          cc_labels(path)        c(<cc> = <label>) for every built-in congestion control
#                                 and variant, in the registry's order ("BBR-E" for bbr_e)
#          cc_label(cc)           the labels of a vector of congestion controls; one the
#                                 registry does not know is returned upper-cased
#          cc_palette(colours)    a figure's colours by congestion control,
#                                 c(bbr = "#0072B2", ...), renamed to the labels the
#                                 figure draws (ggplot's manual scales key on them)
# Inputs:  variants.yaml (the yaml package); read once per path and session.
# Outputs: named character vectors.
# Sourced by load.R with chdir = TRUE, so the path is found from the working directory.

VARIANTS_YAML <- normalizePath(file.path("..", "..", "mininet", "bbrlab", "experiment", "variants.yaml"), mustWork = FALSE)

.cc_label_cache <- new.env(parent = emptyenv())

cc_labels <- function(path = VARIANTS_YAML) {
  if (!is.null(.cc_label_cache[[path]])) return(.cc_label_cache[[path]])
  if (!file.exists(path)) stop(sprintf("variant registry %s not found", path), call. = FALSE)
  reg <- yaml::read_yaml(path)
  entries <- c(reg$built_in, reg$variants)
  labels <- vapply(names(entries), function(cc) {
    lab <- entries[[cc]]$label
    if (!is.character(lab) || length(lab) != 1 || !nzchar(lab))
      stop(sprintf("%s: %s has no label", path, cc), call. = FALSE)
    lab
  }, "")
  .cc_label_cache[[path]] <- labels
  labels
}

cc_label <- function(cc, path = VARIANTS_YAML) {
  labels <- cc_labels(path)
  cc <- as.character(cc)
  unname(ifelse(!is.na(cc) & cc %in% names(labels), labels[cc], toupper(cc)))
}

cc_palette <- function(colours, path = VARIANTS_YAML) {
  setNames(unname(colours), cc_label(names(colours), path))
}
