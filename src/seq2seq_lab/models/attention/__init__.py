"""models/attention"""
