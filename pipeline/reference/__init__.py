"""Small, obviously-correct pure-Python references of each rating system, for tests."""
