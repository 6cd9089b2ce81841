"""Certified discards: a seeded sample of what a release set aside, labelled, made an exact bound.

`strata` names what can be certified (a pile, a rule's wins, a rule's
domain misses, what a screening tier discarded) and reads its works;
`sample` draws the bottom-k sample and writes it as a sheet (`sheet`: the
CSV a person labels); `certificate` checks a labelled sheet is that sample
and computes the certificate with `bound` (exact hypergeometric); `results`
is the state record and its reader (the pages read certificates through
it); `gate` is `reporter export --require-certified`. docs/certify.md.
"""
