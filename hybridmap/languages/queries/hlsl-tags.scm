; HLSL tags for hybridmap.
; Written standalone (not `; inherits: cpp`) so that HLSL's built-in types (float3, float4x4, Texture2D,
; StructuredBuffer<...>, SamplerState, ...) and vector constructor calls (`float4(...)`) are not reported as
; references. Only file-level (and include-guard / #if-level) declarations count as globals.

; --- definitions ---------------------------------------------------------------

; Free functions (entry points, helpers), also inside namespaces.
[
  (translation_unit (function_definition declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (declaration_list (function_definition declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_ifdef (function_definition declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_if (function_definition declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_else (function_definition declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_elif (function_definition declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (translation_unit (template_declaration (function_definition declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function))
]

; Prototypes `float3 f(float3 x);`.
[
  (translation_unit (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (declaration_list (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_ifdef (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_if (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_else (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_elif (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
]

; Member functions of structs / classes / interfaces (HLSL 2021), inline or declared.
(field_declaration_list (function_definition declarator: (function_declarator declarator: (field_identifier) @name.definition.method)) @definition.method)
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name.definition.method)) @definition.method
; Out-of-line `float3 Light::Evaluate(...) {...}`.
(function_definition
  declarator: (function_declarator declarator: (qualified_identifier name: (identifier) @name.definition.method))) @definition.method

(struct_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(class_specifier name: (type_identifier) @name.definition.class body: (field_declaration_list)) @definition.class
(enum_specifier name: (type_identifier) @name.definition.enum body: (enumerator_list)) @definition.enum
(namespace_definition name: (namespace_identifier) @name.definition.namespace) @definition.namespace
(type_definition declarator: (type_identifier) @name.definition.type) @definition.type

; `cbuffer Name { ... };` / `tbuffer`: the grammar reads the block as a body-carrying definition whose
; "type" is the keyword, or (in some contexts) as a `cbuffer_specifier`.
(function_definition
  type: (type_identifier) @_kw
  declarator: (identifier) @name.definition.interface
  (#any-of? @_kw "cbuffer" "tbuffer")) @definition.interface
(cbuffer_specifier name: (type_identifier) @name.definition.interface) @definition.interface

[
  (preproc_def name: (identifier) @name.definition.macro)
  (preproc_function_def name: (identifier) @name.definition.macro)
] @definition.macro

; Globals: `static const` ones are constants, resources / uniforms are variables.
([
  (translation_unit (declaration declarator: [
      (identifier) @name.definition.constant
      (array_declarator declarator: (identifier) @name.definition.constant)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.constant)
    ]) @definition.constant)
  (declaration_list (declaration declarator: [
      (identifier) @name.definition.constant
      (array_declarator declarator: (identifier) @name.definition.constant)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.constant)
    ]) @definition.constant)
  (preproc_ifdef (declaration declarator: [
      (identifier) @name.definition.constant
      (array_declarator declarator: (identifier) @name.definition.constant)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.constant)
    ]) @definition.constant)
  (preproc_if (declaration declarator: [
      (identifier) @name.definition.constant
      (array_declarator declarator: (identifier) @name.definition.constant)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.constant)
    ]) @definition.constant)
  (preproc_else (declaration declarator: [
      (identifier) @name.definition.constant
      (array_declarator declarator: (identifier) @name.definition.constant)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.constant)
    ]) @definition.constant)
]
  (#match? @definition.constant "^(static\\s+)?const\\s"))

([
  (translation_unit (declaration declarator: [
      (identifier) @name.definition.variable
      (array_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.variable)
    ]) @definition.variable)
  (declaration_list (declaration declarator: [
      (identifier) @name.definition.variable
      (array_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.variable)
    ]) @definition.variable)
  (preproc_ifdef (declaration declarator: [
      (identifier) @name.definition.variable
      (array_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.variable)
    ]) @definition.variable)
  (preproc_if (declaration declarator: [
      (identifier) @name.definition.variable
      (array_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.variable)
    ]) @definition.variable)
  (preproc_else (declaration declarator: [
      (identifier) @name.definition.variable
      (array_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.variable)
    ]) @definition.variable)
]
  (#not-match? @definition.variable "^(static\\s+)?const\\s"))

; --- references ----------------------------------------------------------------

; Calls `f()`, `obj.Method()`, `ns::f()`, except built-in vector/matrix constructors `float4(...)` and the
; `register(t0)` / `packoffset(c0)` binding annotations.
(call_expression
  function: [
    (identifier) @name.reference.call
    (field_expression field: (field_identifier) @name.reference.call)
    (qualified_identifier name: (identifier) @name.reference.call)
  ]
  (#not-match? @name.reference.call "^((float|half|double|int|uint|bool|dword|min16float|min10float|min16int|min12int|min16uint|u?int(16|64)_t|float(16|32|64)_t)([1-4](x[1-4])?)?|register|packoffset)$"))

; Uses of user types (structs, classes, typedefs), skipping built-in scalar/vector/matrix/resource types.
([
  (declaration type: (type_identifier) @name.reference.type)
  (parameter_declaration type: (type_identifier) @name.reference.type)
  (field_declaration type: (type_identifier) @name.reference.type)
  (function_definition type: (type_identifier) @name.reference.type)
  (type_descriptor type: (type_identifier) @name.reference.type)
  (template_type name: (type_identifier) @name.reference.type)
  (type_definition type: (type_identifier) @name.reference.type)
]
  (#not-match? @name.reference.type "^((float|half|double|int|uint|bool|dword|min16float|min10float|min16int|min12int|min16uint|u?int(16|64)_t|float(16|32|64)_t)([1-4](x[1-4])?)?|(RW|RasterizerOrdered)?(Texture(1D|2D|3D|Cube|2DMS)(Array)?|Buffer|ByteAddressBuffer|StructuredBuffer)|(Append|Consume)StructuredBuffer|Sampler(State|ComparisonState)|sampler[A-Za-z0-9_]*|texture[A-Za-z0-9_]*|vector|matrix|string|cbuffer|tbuffer|ConstantBuffer|TextureBuffer|RaytracingAccelerationStructure|RayDesc|BuiltInTriangleIntersectionAttributes|(Input|Output)Patch|(Point|Line|Triangle)Stream)$"))

; Inheritance `struct B : A`.
(base_class_clause (type_identifier) @name.reference.class)
