; WGSL tags for hybridmap
; The bundled grammar predates WGSL's `const` and `alias` keywords (it knows
; `let`/`override` module constants and `type` aliases). Module-level `const`
; and `alias` declarations parse as a top-level ERROR node whose first two
; children are the keyword and the name; two recovery patterns pick those up.

; ---- definitions -----------------------------------------------------------

(function_declaration
  name: (identifier) @name.definition.function) @definition.function

(struct_declaration
  name: (identifier) @name.definition.struct) @definition.struct

(struct_member
  (variable_identifier_declaration
    name: (identifier) @name.definition.field)) @definition.field

(type_alias_declaration
  (identifier) @name.definition.type) @definition.type

; let / override at module level
(global_constant_declaration
  (variable_identifier_declaration
    name: (identifier) @name.definition.constant)) @definition.constant

; var<uniform> / var<storage> / var<private> ... at module level
(global_variable_declaration
  (variable_declaration
    (variable_identifier_declaration
      name: (identifier) @name.definition.variable))) @definition.variable

; recovery: `const NAME ...;` and `alias NAME = ...;` (newer WGSL syntax)
(source_file
  (ERROR
    . (identifier) @_kw
    . (identifier) @name.definition.constant
    (#eq? @_kw "const")) @definition.constant)

(source_file
  (ERROR
    . (identifier) @_kw
    . (identifier) @name.definition.type
    (#eq? @_kw "alias")) @definition.type)

; ---- references ------------------------------------------------------------

; user function calls (built-ins skipped); Capitalised callee = struct constructor
(type_constructor_or_function_call_expression
  (type_declaration
    (identifier) @name.reference.call
    (#not-match? @name.reference.call "^[A-Z]")
    (#not-match? @name.reference.call "^(abs|acos|acosh|all|any|arrayLength|asin|asinh|atan|atan2|atanh|ceil|clamp|cos|cosh|countLeadingZeros|countOneBits|countTrailingZeros|cross|degrees|determinant|distance|dot|dpdx|dpdxCoarse|dpdxFine|dpdy|dpdyCoarse|dpdyFine|exp|exp2|extractBits|faceForward|firstLeadingBit|firstTrailingBit|floor|fma|fract|frexp|fwidth|insertBits|inverseSqrt|ldexp|length|log|log2|max|min|mix|modf|normalize|pow|quantizeToF16|radians|reflect|refract|reverseBits|round|saturate|select|sign|sin|sinh|smoothstep|sqrt|step|tan|tanh|transpose|trunc|textureSample|textureSampleLevel|textureSampleBias|textureSampleCompare|textureSampleGrad|textureLoad|textureStore|textureDimensions|textureNumLayers|textureNumLevels|textureNumSamples|textureGather|atomicLoad|atomicStore|atomicAdd|atomicSub|atomicMax|atomicMin|atomicAnd|atomicOr|atomicXor|atomicExchange|atomicCompareExchangeWeak|pack4x8snorm|pack4x8unorm|pack2x16snorm|pack2x16unorm|pack2x16float|unpack4x8snorm|unpack4x8unorm|unpack2x16snorm|unpack2x16unorm|unpack2x16float|storageBarrier|workgroupBarrier|workgroupUniformLoad)$"))) @reference.call

(type_constructor_or_function_call_expression
  (type_declaration
    (identifier) @name.reference.class
    (#match? @name.reference.class "^[A-Z]"))) @reference.class

; type uses: declarations, parameters, return types, template arguments, aliases
[
  (variable_identifier_declaration type: (type_declaration (identifier) @name.reference.type))
  (function_return_type_declaration (type_declaration (identifier) @name.reference.type))
  (type_declaration (type_declaration (identifier) @name.reference.type))
  (type_alias_declaration (type_declaration (identifier) @name.reference.type))
] @reference.type
