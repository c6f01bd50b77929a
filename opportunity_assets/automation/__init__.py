"""Unattended nights: the nightly schedule and the sensor chain scan → per-candidate run → brief → notify."""
