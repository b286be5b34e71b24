"""Settings of in-process trials on the smallest tiny model, shared by the tests that run one."""

# Seconds per trial on one core: a 2-layer, 16-wide model over 400 word pieces, one epoch.
TINY_TRIAL = {
    "model": "tiny",
    "tiny_hidden_size": 16,
    "tiny_layers": 2,
    "tiny_heads": 2,
    "tiny_vocab_size": 400,
    "batch_size": 8,
    "epochs": 1.0,
}
