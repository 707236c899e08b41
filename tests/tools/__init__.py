"""Tests for the ``tools`` package, one module per module."""
