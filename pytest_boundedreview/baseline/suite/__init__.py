"""What the suite is: its test files, whether a session ran all of it and who left tests out, the
project's configuration and tox's suite as the base has them, a change narrowing its collection."""
