; Nim tags for hybridmap

(proc_declaration
  name: [(identifier) @name.definition.function
         (exported_symbol (identifier) @name.definition.function)]) @definition.function
(func_declaration
  name: [(identifier) @name.definition.function
         (exported_symbol (identifier) @name.definition.function)]) @definition.function
(iterator_declaration
  name: [(identifier) @name.definition.function
         (exported_symbol (identifier) @name.definition.function)]) @definition.function
(converter_declaration
  name: [(identifier) @name.definition.function
         (exported_symbol (identifier) @name.definition.function)]) @definition.function
(method_declaration
  name: [(identifier) @name.definition.method
         (exported_symbol (identifier) @name.definition.method)]) @definition.method
(template_declaration
  name: [(identifier) @name.definition.macro
         (exported_symbol (identifier) @name.definition.macro)]) @definition.macro
(macro_declaration
  name: [(identifier) @name.definition.macro
         (exported_symbol (identifier) @name.definition.macro)]) @definition.macro

; type sections: one tag per type_declaration, kind chosen by its body
(type_declaration
  (type_symbol_declaration
    name: [(identifier) @name.definition.enum
           (exported_symbol (identifier) @name.definition.enum)])
  (enum_declaration)) @definition.enum

(type_declaration
  (type_symbol_declaration
    name: [(identifier) @name.definition.struct
           (exported_symbol (identifier) @name.definition.struct)])
  (object_declaration)) @definition.struct

(type_declaration
  (type_symbol_declaration
    name: [(identifier) @name.definition.class
           (exported_symbol (identifier) @name.definition.class)])
  [(ref_type (object_declaration)) (pointer_type (object_declaration))]) @definition.class

(type_declaration
  (type_symbol_declaration
    name: [(identifier) @name.definition.interface
           (exported_symbol (identifier) @name.definition.interface)])
  (concept_declaration)) @definition.interface

(type_declaration
  (type_symbol_declaration
    name: [(identifier) @name.definition.type
           (exported_symbol (identifier) @name.definition.type)])
  [(type_expression) (distinct_type) (tuple_type) (proc_type)
   (ref_type (type_expression)) (pointer_type (type_expression))]) @definition.type

; module-level const / let / var
(source_file
  (const_section
    (variable_declaration
      (symbol_declaration_list
        (symbol_declaration
          name: [(identifier) @name.definition.constant
                 (exported_symbol (identifier) @name.definition.constant)]))) @definition.constant))

(source_file
  (var_section
    (variable_declaration
      (symbol_declaration_list
        (symbol_declaration
          name: [(identifier) @name.definition.variable
                 (exported_symbol (identifier) @name.definition.variable)]))) @definition.variable))

(source_file
  (let_section
    (variable_declaration
      (symbol_declaration_list
        (symbol_declaration
          name: [(identifier) @name.definition.variable
                 (exported_symbol (identifier) @name.definition.variable)]))) @definition.variable))

; references
(import_statement
  (expression_list
    [(identifier) @name.reference.module
     (infix_expression right: (identifier) @name.reference.module)])) @reference.module

(import_from_statement
  module: [(identifier) @name.reference.module
           (infix_expression right: (identifier) @name.reference.module)]) @reference.module

(call
  function: (identifier) @name.reference.call
  (#not-match? @name.reference.call "^(echo|inc|dec|add|len|assert|doAssert|new|result|discard)$")) @reference.call

(call
  function: (dot_expression right: (identifier) @name.reference.call)) @reference.call

(object_declaration
  inherits: (type_expression (identifier) @name.reference.class)) @reference.class

(parameter_declaration
  type: (type_expression (identifier) @name.reference.type)) @reference.type

(_ return_type: (type_expression (identifier) @name.reference.type)) @reference.type
