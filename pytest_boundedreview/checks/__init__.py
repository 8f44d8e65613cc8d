"""Stage 2, beside the tests: configured check commands and built-in diff scans."""
