"""The last stage: the report assembled from what was established, and published."""
