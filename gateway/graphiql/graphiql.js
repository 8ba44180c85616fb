// Starts GraphiQL against this gateway's endpoint; every file it loads is served by the gateway itself.
(function () {
  var endpoint = document.currentScript.getAttribute('data-endpoint') || new URL('../graphql', window.location.href).pathname;
  var fetcher = GraphiQL.createFetcher({ url: endpoint });
  var defaultQuery = [
    '# One request across the four services of the passport platform.',
    '{',
    '  trust { health }',
    '  registry { health }',
    '  issuer { keyring }',
    '  archive { discovery }',
    '}',
    '',
  ].join('\n');
  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, { fetcher: fetcher, defaultQuery: defaultQuery, defaultEditorToolsVisibility: true }),
  );
})();
