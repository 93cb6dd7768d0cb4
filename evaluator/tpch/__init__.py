"""TPC-H data: generation with DuckDB, the columnar cache, loading onto a device, reference answers."""
