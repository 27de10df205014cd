"""Learning-rate schedules used by the shared Lightning module."""
