"""Search: what of a part is searchable (:mod:`.fields`, no storage: the store indexes with it) and
the query, its hits and paging (:mod:`.query`). Import the module you need; this package loads neither."""
