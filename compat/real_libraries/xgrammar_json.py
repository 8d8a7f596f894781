"""xgrammar compiles the built-in JSON grammar and a JSON schema for a small vocabulary, then
matches strings and fills the next-token bitmask (its C++ core crosses TVM FFI throughout)."""
import xgrammar as xgr

vocab = ["<eos>", "{", "}", "[", "]", ",", ":", '"', "a", "b", "1", "2", " ", "true", '"a"']
info = xgr.TokenizerInfo(vocab, stop_token_ids=[0])
compiler = xgr.GrammarCompiler(info, max_threads=1)
json_grammar = compiler.compile_builtin_json_grammar()
matcher = xgr.GrammarMatcher(json_grammar)
print("accept", matcher.accept_string('{"a": [1, 2, true]'), matcher.is_terminated())
bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
matcher.fill_next_token_bitmask(bitmask)
allowed = [vocab[i] for i in range(len(vocab)) if (int(bitmask[0, i // 32]) >> (i % 32)) & 1]
print("next", allowed)
print("close", matcher.accept_string("}"), matcher.accept_token(0), matcher.is_terminated())
print("reject", xgr.GrammarMatcher(json_grammar).accept_string("}{"))
schema = compiler.compile_json_schema('{"type": "object", "properties": {"a": {"type": "integer"}},'
                                      ' "required": ["a"]}')
strict = xgr.GrammarMatcher(schema)
print("schema", strict.accept_string('{"a": 12}'), xgr.GrammarMatcher(schema).accept_string('{"b"'))
print("grammar", str(xgr.Grammar.from_regex("a+b"))[:60])
