// suspectBlocks64: the bucket tables of suspect64.go, 64 positions at a
// time with AVX-512 VBMI. TestSuspectBlocks64 and FuzzSuspectBlocks64 check
// it against suspect64At.

//go:build amd64

#include "textflag.h"

// func suspectBlocks64(b []byte, t *[3][128]byte) (pos int, mask uint64)
TEXT ·suspectBlocks64(SB), NOSPLIT, $0-48
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ t+24(FP), DI
	XORQ DX, DX
	SUBQ $66, BX // the last block start that leaves 2 bytes after it
	JL   done
	VMOVDQU64 0(DI), Z10
	VMOVDQU64 64(DI), Z11
	VMOVDQU64 128(DI), Z12
	VMOVDQU64 192(DI), Z13
	VMOVDQU64 256(DI), Z14
	VMOVDQU64 320(DI), Z15

loop:
	CMPQ DX, BX
	JG   done
	VMOVDQU64 (SI)(DX*1), Z0
	VMOVDQU64 1(SI)(DX*1), Z1
	VMOVDQU64 2(SI)(DX*1), Z2
	// Each byte looks itself up (its low 7 bits) in its position's table.
	VPERMI2B Z11, Z10, Z0
	VPERMI2B Z13, Z12, Z1
	VPERMI2B Z15, Z14, Z2
	VPANDQ   Z1, Z0, Z0
	VPANDQ   Z2, Z0, Z0
	VPTESTMB Z0, Z0, K1
	KMOVQ    K1, AX
	TESTQ    AX, AX
	JNZ      found
	ADDQ     $64, DX
	JMP      loop

found:
	MOVQ DX, pos+32(FP)
	MOVQ AX, mask+40(FP)
	VZEROUPPER
	RET

done:
	MOVQ DX, pos+32(FP)
	MOVQ $0, mask+40(FP)
	VZEROUPPER
	RET
