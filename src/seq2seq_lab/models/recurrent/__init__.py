"""models/recurrent"""
