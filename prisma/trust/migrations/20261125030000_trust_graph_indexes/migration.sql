-- Indexes that let a key-standing question or a delegation read the part of the trust graph it
-- concerns instead of the whole graph (subgraphs/trust/data/store.ts, graphAround). The Prisma
-- schema language cannot express expression indexes, so they are declared here only.

-- The nodes listing a key: document -> keys contains an object with that kid.
CREATE INDEX "trust_node_keys_idx" ON "trust_node" USING GIN ((document -> 'keys') jsonb_path_ops);

-- The revocations of a node or of one of its keys (subject "<node id>" or "<node id>#<kid>").
CREATE INDEX "revocation_node_idx" ON "revocation" (split_part(subject, '#', 1));
