-- The statements of trust_key_holders and trust_graph_part planned once per connection. PL/pgSQL
-- keeps a plan per statement, but left to choose, it plans again for every call: a generic plan
-- of `= ANY(seeds)` and of the recursive walk is estimated for thousands of rows, dearer than a
-- plan made for the three seeds of the call, so it never switches to it, and each key-standing
-- read planned three statements or more (1.5 ms of the backend's 2 ms over a trust graph of 100,000
-- nodes, docs/SCALING.md). The generic plans read the same indexes (EXPLAIN (GENERIC_PLAN)): the
-- subject index per node reached, the node and edge indexes for the part, the GIN index of keys.
ALTER FUNCTION "trust_key_holders"(text[]) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION "trust_graph_part"(text[]) SET plan_cache_mode = force_generic_plan;
