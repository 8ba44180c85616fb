/** The GraphQL documents the issuer's operator routes send through the gateway. */

const OPERATOR_FIELDS = 'id name status created_at: createdAt suspended_at: suspendedAt did keys';

export const CREATE_OPERATOR = `mutation CreateOperator($input: OperatorInput!) { creation: createOperator(input: $input) { created operator { ${OPERATOR_FIELDS} } } }`;

export const OPERATORS = `query Operators { operators { ${OPERATOR_FIELDS} } }`;

export const OPERATOR = `query Operator($id: ID!) { operator(id: $id) { ${OPERATOR_FIELDS} } }`;

export const SUSPEND_OPERATOR = `mutation SuspendOperator($id: ID!) { operator: suspendOperator(id: $id) { ${OPERATOR_FIELDS} } }`;

export const OPERATOR_DID_DOCUMENT = 'query OperatorDidDocument($operator: ID!) { issuerDidDocument(operator: $operator) }';
