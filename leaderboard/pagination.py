"""How the API's lists are paged: `?page=N` (from 1) and `?page_size=` (at most 200)."""

from __future__ import annotations

from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    """Pages of `count`, `next`, `previous` and `results`; REST_FRAMEWORK["PAGE_SIZE"] rows by default.

    Page numbers rather than offsets: the lists are ordered newest first, and a client walking them with
    `next` links needs nothing else."""

    page_size_query_param = "page_size"
    max_page_size = 200
