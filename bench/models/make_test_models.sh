#!/bin/sh
# Regenerate the small committed models under tests/models/ (needs torch; the
# C test suite does not). Set 0 is batch 1 (seq 8 for text); set 1 is a second
# shape, written against the same model.onnx.
set -e
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
EXPORT="$PY bench/models/export.py --out tests/models"
$EXPORT bert_tiny distilbert_tiny gpt2_tiny cnn_small
$EXPORT --set 1 --data-only --batch 2 --seq 16 bert_tiny distilbert_tiny gpt2_tiny
$EXPORT --set 1 --data-only --batch 2 cnn_small
# prefill.onnx, decode.onnx and torch's greedy tokens (test e2e_generate_gpt2_kv_tiny)
$EXPORT gpt2_kv_tiny
$PY bench/models/npcheck.py tests/models/bert_tiny tests/models/distilbert_tiny \
    tests/models/gpt2_tiny tests/models/cnn_small
