"""`reporter mail`: send a digest week's e-mail edition, once, through the SMTP server of `[mail]`.

A stage like the others: it imports neither the site nor the command line.
It reads the built site's `digest/YYYY-Www.eml` as a file (found by
`reporter.naming.email_edition_paths`, the names the site writes it under),
adds the From and To headers of `[mail]` and sends it; a week it sent is
recorded in the workspace's `state/mail-sent.json` (docs/digest.md, "Sending it").
"""
