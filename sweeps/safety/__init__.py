"""What keeps a sweep safe to stop and to resume: signals, the driver's lock on the store, the
disk it writes to, Tune's saved state, and a baseline with no finished run."""
