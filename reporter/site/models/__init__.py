"""The page models: one frozen dataclass per page, every field documented, one module per page family.

A template sees exactly the fields of its page (tests/test_site_models.py
checks that each template uses only these names and that the HTML page and
its Markdown twin together use all of them). Everything a template shows is
already computed and formatted as data here; templates only lay it out.
`PAGES` is every page model (a class with a TEMPLATE), found, not listed.
"""

from __future__ import annotations

from .common import (Count, Crumb, Download, Fragment, Link, NextStep, PageMeta, ReleaseName, Row, Sample, Snippet,
                     WorkView)
from .home import (DigestSummary, HomePage, NoveltySummary, PendingNote, PileShare, ReleaseSummary, VerdictCount,
                   WeekSummary)
from .release import (DomainRow, FlowRow, Overlap, PileRow, ReleasePage, RulePage, RuleRow)
from .status import (CalibrationView, CertificateView, Grid, GridCell, GridColumn, GridRow, LabelRow, LostView,
                     LostWork, PlanView, ScreeningSection, StatusPage, TierView)
from .diff import (Comparison, DiffPage, InputChange, Move, MovedGroup, MovedView, PoolGroup, RuleChange, SpecChange,
                   StateChange, StateCount, Transition)
from .novelty import (CandidateRow, GraphUsed, IdList, NoveltyPage)
from .digest import (DigestIndexPage, DigestWeekPage, DriftConcept, DriftEntry, DropGroup, DropReason, DropRow,
                     DisagreementRow, JudgeSpendRow, JudgeView, ListedAgainFold, ListedAgainView, MergeView,
                     PaperRow, PaperView, ReviewGroup)
from .quality import MissedView, QualityView
from .close import CloseRow, CloseView
from .glossary import (GlossaryPage, Term)
from .certificate import (CertificatePage, RescuedWork)
from .disclosure import (DisclosureBlock, DisclosureBox, DisclosureItem, DisclosurePage, DisclosureSource,
                         KeptDisclosureView)

PAGES = tuple(cls for cls in list(globals().values())
              if isinstance(cls, type) and cls.__module__.startswith(__name__ + ".") and "TEMPLATE" in vars(cls))
"""Every page model, in the order of the modules above (the contract test reads it)."""
