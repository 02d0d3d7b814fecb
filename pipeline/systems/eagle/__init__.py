"""Dip2000's Eagle points table: rules, compiled kernel, table order and plain reference."""
