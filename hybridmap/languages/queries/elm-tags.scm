; Elm tags for hybridmap. A top-level value with parameters is a function, any other a constant
; (let-bound values are locals and stay out).
(file
  (value_declaration
    (function_declaration_left . (lower_case_identifier) @name.definition.function (_))) @definition.function)
(file
  (value_declaration
    (function_declaration_left . (lower_case_identifier) @name.definition.constant .)) @definition.constant)
(type_alias_declaration name: (upper_case_identifier) @name.definition.type) @definition.type
(type_declaration name: (upper_case_identifier) @name.definition.enum) @definition.enum
(union_variant name: (upper_case_identifier) @name.definition.constructor) @definition.constructor
(port_annotation name: (lower_case_identifier) @name.definition.function) @definition.function
(module_declaration name: (upper_case_qid) @name.definition.module) @definition.module

; calls and qualified values (Cart.total, Cart.empty)
(function_call_expr target: (value_expr name: (value_qid (lower_case_identifier) @name.reference.call .)))
(value_qid (upper_case_identifier) (lower_case_identifier) @name.reference.call .)
(function_call_expr target: (value_expr name: (upper_case_qid (upper_case_identifier) @name.reference.call .)))
(type_ref (upper_case_qid (upper_case_identifier) @name.reference.type .))
(import_clause moduleName: (upper_case_qid) @name.reference.module)
(value_qid . (upper_case_identifier) @name.reference.module (lower_case_identifier))
; bare value uses (constants, functions passed as values)
(value_expr name: (value_qid . (lower_case_identifier) @name.reference.call .))
