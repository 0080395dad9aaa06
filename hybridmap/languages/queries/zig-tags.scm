; Zig tags for hybridmap.
(Decl (FnProto function: (IDENTIFIER) @name.definition.function)) @definition.function
(source_file (Decl (VarDecl variable_type_function: (IDENTIFIER) @name.definition.struct
  (ErrorUnionExpr (SuffixExpr (ContainerDecl)))) @definition.struct))
(source_file (Decl (VarDecl variable_type_function: (IDENTIFIER) @name.definition.constant
  (ErrorUnionExpr (SuffixExpr [(INTEGER) (FLOAT) (STRINGLITERALSINGLE)]))) @definition.constant))

(FieldOrFnCall function_call: (IDENTIFIER) @name.reference.call)
(SuffixExpr variable_type_function: (IDENTIFIER) @name.reference.call . (FnCallArguments))
(ParamType (ErrorUnionExpr (SuffixExpr variable_type_function: (IDENTIFIER) @name.reference.type)))
