"""models/transformer"""
