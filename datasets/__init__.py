"""Synthetic poker populations with planted collusion and their ground truth.

This package never imports ``detectors``: the world must not know how it is judged.
"""
