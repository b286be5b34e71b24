"""The built-in sections of a sweep's report, one module each (tiny ones grouped): each
defines ``SECTION`` (:class:`analysis.section.Section`); :mod:`analysis.report_sections`
lists them in order."""
