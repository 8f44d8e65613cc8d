"""Trees read by content: the working tree, an index file, a frozen tree's files, by-products."""
