/**
 * An operator's node in the trust graph (docs/OPERATORS.md): `operator:<id>`, an issuer node
 * holding the operator's keys, delegated from the platform's root node `platform` by an ordinary
 * delegation edge. A verifier names the operator that signed from the node its path reaches.
 */
export const OPERATOR_NODE_PREFIX = 'operator:';

export function operatorNodeId(operator: string): string {
  return `${OPERATOR_NODE_PREFIX}${operator}`;
}

/** The operator a node stands for, or undefined for any other node. */
export function operatorOfNode(nodeId: string): string | undefined {
  return nodeId.startsWith(OPERATOR_NODE_PREFIX) && nodeId.length > OPERATOR_NODE_PREFIX.length ? nodeId.slice(OPERATOR_NODE_PREFIX.length) : undefined;
}
