// suspectBlocks: the filters of suspectFilters (suspect.go), 32 positions
// at a time with AVX2. Written from that table; TestSuspectBlocks and
// FuzzSuspectBlocks check that the two agree: change both together.

//go:build amd64

#include "textflag.h"

// func suspectBlocks(b []byte) (pos int, mask uint32)
TEXT ·suspectBlocks(SB), NOSPLIT, $0-36
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	XORQ DX, DX
	SUBQ $34, BX // the last block start that leaves 2 bytes after it
	JL   done
loop:
	CMPQ DX, BX
	JG   done
	VMOVDQU (SI)(DX*1), Y0
	VMOVDQU 1(SI)(DX*1), Y1
	VMOVDQU 2(SI)(DX*1), Y2
	VPOR suspectConsts<>+0(SB), Y0, Y3
	VPOR suspectConsts<>+0(SB), Y1, Y4
	VPOR suspectConsts<>+0(SB), Y2, Y5
	// k@0 -@1
	VPCMPEQB suspectConsts<>+32(SB), Y0, Y7
	VPCMPEQB suspectConsts<>+64(SB), Y1, Y8
	VPAND Y8, Y7, Y7
	VMOVDQU Y7, Y6
	// I@0 A@1
	VPCMPEQB suspectConsts<>+96(SB), Y0, Y7
	VPCMPEQB suspectConsts<>+128(SB), Y1, Y8
	VPAND Y8, Y7, Y7
	VPOR Y7, Y6, Y6
	// I@0 z@1
	VPCMPEQB suspectConsts<>+96(SB), Y0, Y7
	VPCMPEQB suspectConsts<>+160(SB), Y1, Y8
	VPAND Y8, Y7, Y7
	VPOR Y7, Y6, Y6
	// h@0 _@2
	VPCMPEQB suspectConsts<>+192(SB), Y0, Y7
	VPCMPEQB suspectConsts<>+224(SB), Y2, Y8
	VPAND Y8, Y7, Y7
	VPOR Y7, Y6, Y6
	// b@0 _@1
	VPCMPEQB suspectConsts<>+256(SB), Y0, Y7
	VPCMPEQB suspectConsts<>+224(SB), Y1, Y8
	VPAND Y8, Y7, Y7
	VPOR Y7, Y6, Y6
	// x@0 o@1
	VPCMPEQB suspectConsts<>+288(SB), Y0, Y7
	VPCMPEQB suspectConsts<>+320(SB), Y1, Y8
	VPAND Y8, Y7, Y7
	VPOR Y7, Y6, Y6
	// [r]@0 [e]@1 [r]@2
	VPCMPEQB suspectConsts<>+352(SB), Y3, Y7
	VPCMPEQB suspectConsts<>+384(SB), Y4, Y8
	VPAND Y8, Y7, Y7
	VPCMPEQB suspectConsts<>+352(SB), Y5, Y8
	VPAND Y8, Y7, Y7
	VPOR Y7, Y6, Y6
	// [k]@0 [e]@1 [y]@2
	VPCMPEQB suspectConsts<>+32(SB), Y3, Y7
	VPCMPEQB suspectConsts<>+384(SB), Y4, Y8
	VPAND Y8, Y7, Y7
	VPCMPEQB suspectConsts<>+416(SB), Y5, Y8
	VPAND Y8, Y7, Y7
	VPOR Y7, Y6, Y6
	// [u]@0 [t]@1 [h]@2
	VPCMPEQB suspectConsts<>+448(SB), Y3, Y7
	VPCMPEQB suspectConsts<>+480(SB), Y4, Y8
	VPAND Y8, Y7, Y7
	VPCMPEQB suspectConsts<>+192(SB), Y5, Y8
	VPAND Y8, Y7, Y7
	VPOR Y7, Y6, Y6
	// \@0 u@1
	VPCMPEQB suspectConsts<>+512(SB), Y0, Y7
	VPCMPEQB suspectConsts<>+448(SB), Y1, Y8
	VPAND Y8, Y7, Y7
	VPOR Y7, Y6, Y6
	// \@0 /@1
	VPCMPEQB suspectConsts<>+512(SB), Y0, Y7
	VPCMPEQB suspectConsts<>+544(SB), Y1, Y8
	VPAND Y8, Y7, Y7
	VPOR Y7, Y6, Y6
	VPMOVMSKB Y6, AX
	TESTL AX, AX
	JNZ  found
	ADDQ $32, DX
	JMP  loop
found:
	MOVQ DX, pos+24(FP)
	MOVL AX, mask+32(FP)
	VZEROUPPER
	RET
done:
	MOVQ DX, pos+24(FP)
	MOVL $0, mask+32(FP)
	VZEROUPPER
	RET

// Each byte the filters look for, 32 times.
DATA suspectConsts<>+0(SB)/8, $0x2020202020202020
DATA suspectConsts<>+8(SB)/8, $0x2020202020202020
DATA suspectConsts<>+16(SB)/8, $0x2020202020202020
DATA suspectConsts<>+24(SB)/8, $0x2020202020202020
DATA suspectConsts<>+32(SB)/8, $0x6b6b6b6b6b6b6b6b
DATA suspectConsts<>+40(SB)/8, $0x6b6b6b6b6b6b6b6b
DATA suspectConsts<>+48(SB)/8, $0x6b6b6b6b6b6b6b6b
DATA suspectConsts<>+56(SB)/8, $0x6b6b6b6b6b6b6b6b
DATA suspectConsts<>+64(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA suspectConsts<>+72(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA suspectConsts<>+80(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA suspectConsts<>+88(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA suspectConsts<>+96(SB)/8, $0x4949494949494949
DATA suspectConsts<>+104(SB)/8, $0x4949494949494949
DATA suspectConsts<>+112(SB)/8, $0x4949494949494949
DATA suspectConsts<>+120(SB)/8, $0x4949494949494949
DATA suspectConsts<>+128(SB)/8, $0x4141414141414141
DATA suspectConsts<>+136(SB)/8, $0x4141414141414141
DATA suspectConsts<>+144(SB)/8, $0x4141414141414141
DATA suspectConsts<>+152(SB)/8, $0x4141414141414141
DATA suspectConsts<>+160(SB)/8, $0x7a7a7a7a7a7a7a7a
DATA suspectConsts<>+168(SB)/8, $0x7a7a7a7a7a7a7a7a
DATA suspectConsts<>+176(SB)/8, $0x7a7a7a7a7a7a7a7a
DATA suspectConsts<>+184(SB)/8, $0x7a7a7a7a7a7a7a7a
DATA suspectConsts<>+192(SB)/8, $0x6868686868686868
DATA suspectConsts<>+200(SB)/8, $0x6868686868686868
DATA suspectConsts<>+208(SB)/8, $0x6868686868686868
DATA suspectConsts<>+216(SB)/8, $0x6868686868686868
DATA suspectConsts<>+224(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA suspectConsts<>+232(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA suspectConsts<>+240(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA suspectConsts<>+248(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA suspectConsts<>+256(SB)/8, $0x6262626262626262
DATA suspectConsts<>+264(SB)/8, $0x6262626262626262
DATA suspectConsts<>+272(SB)/8, $0x6262626262626262
DATA suspectConsts<>+280(SB)/8, $0x6262626262626262
DATA suspectConsts<>+288(SB)/8, $0x7878787878787878
DATA suspectConsts<>+296(SB)/8, $0x7878787878787878
DATA suspectConsts<>+304(SB)/8, $0x7878787878787878
DATA suspectConsts<>+312(SB)/8, $0x7878787878787878
DATA suspectConsts<>+320(SB)/8, $0x6f6f6f6f6f6f6f6f
DATA suspectConsts<>+328(SB)/8, $0x6f6f6f6f6f6f6f6f
DATA suspectConsts<>+336(SB)/8, $0x6f6f6f6f6f6f6f6f
DATA suspectConsts<>+344(SB)/8, $0x6f6f6f6f6f6f6f6f
DATA suspectConsts<>+352(SB)/8, $0x7272727272727272
DATA suspectConsts<>+360(SB)/8, $0x7272727272727272
DATA suspectConsts<>+368(SB)/8, $0x7272727272727272
DATA suspectConsts<>+376(SB)/8, $0x7272727272727272
DATA suspectConsts<>+384(SB)/8, $0x6565656565656565
DATA suspectConsts<>+392(SB)/8, $0x6565656565656565
DATA suspectConsts<>+400(SB)/8, $0x6565656565656565
DATA suspectConsts<>+408(SB)/8, $0x6565656565656565
DATA suspectConsts<>+416(SB)/8, $0x7979797979797979
DATA suspectConsts<>+424(SB)/8, $0x7979797979797979
DATA suspectConsts<>+432(SB)/8, $0x7979797979797979
DATA suspectConsts<>+440(SB)/8, $0x7979797979797979
DATA suspectConsts<>+448(SB)/8, $0x7575757575757575
DATA suspectConsts<>+456(SB)/8, $0x7575757575757575
DATA suspectConsts<>+464(SB)/8, $0x7575757575757575
DATA suspectConsts<>+472(SB)/8, $0x7575757575757575
DATA suspectConsts<>+480(SB)/8, $0x7474747474747474
DATA suspectConsts<>+488(SB)/8, $0x7474747474747474
DATA suspectConsts<>+496(SB)/8, $0x7474747474747474
DATA suspectConsts<>+504(SB)/8, $0x7474747474747474
DATA suspectConsts<>+512(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA suspectConsts<>+520(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA suspectConsts<>+528(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA suspectConsts<>+536(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA suspectConsts<>+544(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA suspectConsts<>+552(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA suspectConsts<>+560(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA suspectConsts<>+568(SB)/8, $0x2f2f2f2f2f2f2f2f
GLOBL suspectConsts<>(SB), RODATA|NOPTR, $576
