"""Reports of a month's table: the model built from the warehouse, and its text and HTML renderings."""
