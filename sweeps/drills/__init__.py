"""Drills: scripted faults run against real sweeps, by hand or from one slow test."""
