//go:build amd64

#include "textflag.h"

// func strBlocks(b []byte, i int) (j int, escaped bool)
//
// The body of a JSON string from b[i], 32 bytes at a time with AVX2: it
// passes plain bytes and the two-byte escapes (\" \\ \/ \b \f \n \r \t),
// and stops at the first byte it leaves to the caller: a quote, a control
// character, any other backslash, or where fewer than 33 bytes remain.
TEXT ·strBlocks(SB), NOSPLIT, $0-41
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ i+24(FP), DX
	XORL R8, R8
	SUBQ $33, BX // a block at DX, and the byte after it, lie in b: DX <= len-33
	MOVL $0x22, AX
	MOVD AX, X1
	VPBROADCASTB X1, Y1 // '"'
	MOVL $0x5c, AX
	MOVD AX, X2
	VPBROADCASTB X2, Y2 // '\\'
	MOVL $0x1f, AX
	MOVD AX, X3
	VPBROADCASTB X3, Y3 // the last control character

block:
	CMPQ DX, BX
	JG   done
	VMOVDQU  (SI)(DX*1), Y0
	VPCMPEQB Y1, Y0, Y4
	VPCMPEQB Y2, Y0, Y5
	VPMINUB  Y3, Y0, Y6
	VPCMPEQB Y6, Y0, Y6 // bytes <= 0x1f
	VPOR     Y4, Y5, Y4
	VPOR     Y6, Y4, Y4
	VPMOVMSKB Y4, AX
	TESTL    AX, AX
	JNZ      special
	ADDQ     $32, DX
	JMP      block

special:
	BSFL    AX, CX // k: the first flagged byte of the block
	LEAQ    (DX)(CX*1), DI
	MOVBLZX (SI)(DI*1), R9
	CMPB    R9, $0x5c
	JNE     stop
	MOVBLZX 1(SI)(DI*1), R9 // DI <= len-2: the escaped byte is in b
	CMPB    R9, $0x6e // n
	JEQ     escape
	CMPB    R9, $0x22 // "
	JEQ     escape
	CMPB    R9, $0x5c // backslash
	JEQ     escape
	CMPB    R9, $0x74 // t
	JEQ     escape
	CMPB    R9, $0x2f // /
	JEQ     escape
	CMPB    R9, $0x72 // r
	JEQ     escape
	CMPB    R9, $0x62 // b
	JEQ     escape
	CMPB    R9, $0x66 // f
	JEQ     escape
	JMP     stop

escape:
	MOVL $1, R8
	CMPL CX, $31
	JGE  reload // the escaped byte is the next block's first
	ADDL $2, CX
	MOVQ $-1, R10
	SHLQ CX, R10
	ANDQ R10, AX // drop the backslash and the byte it escapes
	TESTL AX, AX
	JNZ  special
	ADDQ $32, DX
	JMP  block

reload:
	LEAQ 2(DI), DX
	JMP  block

stop:
	MOVQ DI, DX

done:
	VZEROUPPER
	MOVQ DX, j+32(FP)
	MOVB R8, escaped+40(FP)
	RET
