"""What the suite is, whether a session ran all of it, and who left tests out."""
