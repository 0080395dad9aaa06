; PowerShell tags for hybridmap.

; --- definitions ---------------------------------------------------------------

(function_statement (function_name) @name.definition.function) @definition.function

(class_statement . (simple_name) @name.definition.class) @definition.class
(enum_statement . (simple_name) @name.definition.enum) @definition.enum

; Class members: a method named like its class is a constructor.
(class_statement
  . (simple_name) @_class
  (class_method_definition (simple_name) @name.definition.constructor) @definition.constructor
  (#eq? @name.definition.constructor @_class))
(class_statement
  . (simple_name) @_class
  (class_method_definition (simple_name) @name.definition.method) @definition.method
  (#not-eq? @name.definition.method @_class))

(class_property_definition (variable) @name.definition.property) @definition.property

; Script-level variables: `$Script:Name = ...` / `$Name = ...` directly in the file, not inside functions.
(program
  (statement_list
    (pipeline
      (assignment_expression
        (left_assignment_expression (logical_expression (bitwise_expression (comparison_expression (additive_expression (multiplicative_expression (format_expression (range_expression (array_literal_expression (unary_expression (variable) @name.definition.variable))))))))))) @definition.variable)))

; --- references ----------------------------------------------------------------

; Commands and cmdlets: `Get-Total -Cart $c`, `Write-Output ...` (not the `using` statement).
(command
  command_name: (command_name) @name.reference.call
  (#not-match? @name.reference.call "^([Uu]sing|[Pp]aram)$")) @reference.call

; Method calls `$cart.Count()`; static calls and construction `[Cart]::new()` use the class.
(invokation_expression
  (member_name (simple_name) @name.reference.call)
  (#not-eq? @name.reference.call "new")) @reference.call
; In argument mode `Cmd $obj.Method()` parses as a member access followed by an argument list.
(command_elements
  (array_literal_expression (unary_expression (member_access (member_name (simple_name) @name.reference.call))))
  .
  (argument_list)) @reference.call
(invokation_expression
  . (type_literal (type_spec (type_name (type_identifier) @name.reference.class))))

; Static members `[Unit]::Piece`.
(member_access
  . (type_literal (type_spec (type_name (type_identifier) @name.reference.class))))

; `New-Object Cart`
(command
  command_name: (command_name) @_cmd
  command_elements: (command_elements . (command_argument_sep) . (generic_token) @name.reference.class)
  (#match? @_cmd "^[Nn]ew-[Oo]bject$"))

; Base class and interfaces: `class Cart : Base, IThing`.
(class_statement . (simple_name) (simple_name) @name.reference.class)

; Declared types of properties, method returns and parameters, script parameters, casts
; (built-in scalar types left out).
(
  [
    (class_property_definition (type_literal (type_spec (type_name (type_identifier) @name.reference.type))))
    (class_method_definition (type_literal (type_spec (type_name (type_identifier) @name.reference.type))))
    (class_method_parameter (type_literal (type_spec (type_name (type_identifier) @name.reference.type))))
    (attribute (type_literal (type_spec (type_name (type_identifier) @name.reference.type))))
    (attribute (type_literal (type_spec (array_type_name (type_name (type_identifier) @name.reference.type)))))
    (class_property_definition (type_literal (type_spec (array_type_name (type_name (type_identifier) @name.reference.type)))))
    (class_method_parameter (type_literal (type_spec (array_type_name (type_name (type_identifier) @name.reference.type)))))
  ]
  (#not-match? @name.reference.type "^([Ss]tring|[Ii]nt|[Ii]nt32|[Ii]nt64|[Ll]ong|[Bb]ool|[Dd]ouble|[Dd]ecimal|[Vv]oid|[Oo]bject|[Hh]ashtable|[Ss]witch)$"))
